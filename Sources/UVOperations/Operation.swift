public enum UVOperationsPlaceholder {}
