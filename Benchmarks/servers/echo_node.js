// echo_node.js: Node's echo server of the server benchmark (scripts/bench --servers): the net
// module as its documentation shows it, each chunk written straight back.
//
//   node echo_node.js --port N [--host ADDRESS] | --unix PATH
//
// Prints "listening on PORT-OR-PATH" once it accepts; SIGTERM or SIGINT stops it.
'use strict';
const net = require('net');
const fs = require('fs');

const args = process.argv.slice(2);
const option = (name) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const host = option('--host') || '127.0.0.1';
const port = option('--port');
const unixPath = option('--unix');
if ((port === undefined) === (unixPath === undefined)) {
  console.error('usage: node echo_node.js --port N [--host ADDRESS] | --unix PATH');
  process.exit(2);
}

const server = net.createServer({ noDelay: true }, (socket) => {
  socket.on('data', (chunk) => {
    // Above the high-water mark, pause reading until the client takes the echoes.
    if (!socket.write(chunk)) {
      socket.pause();
      socket.once('drain', () => socket.resume());
    }
  });
  socket.on('end', () => socket.end());
  socket.on('error', () => socket.destroy());
});

const announce = () => {
  console.log(`listening on ${unixPath !== undefined ? unixPath : server.address().port}`);
};
if (unixPath !== undefined) {
  if (fs.existsSync(unixPath)) fs.unlinkSync(unixPath);
  server.listen({ path: unixPath, backlog: 511 }, announce);
} else {
  server.listen({ host, port: Number(port), backlog: 511 }, announce);
}
for (const signal of ['SIGTERM', 'SIGINT']) {
  process.on(signal, () => {
    server.close();
    process.exit(0);
  });
}
