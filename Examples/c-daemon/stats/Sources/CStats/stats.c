/* The C target that carries stats.h; the component is implemented in Swift (StatsComponent). */
