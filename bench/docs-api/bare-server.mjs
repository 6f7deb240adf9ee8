// The reference of bench/docs-api/static-page.mjs: the least a node:http server can do to send one
// page. It holds the exact bytes the docs server sent (already compressed) in memory and answers
// every request with them, with only the headers a browser needs to use them.
//
// Usage: node bare-server.mjs <body file> <content-type> <content-encoding>; prints its URL.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

const [bodyFile, contentType, contentEncoding] = process.argv.slice(2);
const body = readFileSync(bodyFile);
const headers = {
  'Content-Type': contentType,
  'Content-Length': body.length,
  ...(contentEncoding && contentEncoding !== 'identity' ? { 'Content-Encoding': contentEncoding } : {}),
};

const server = createServer({ keepAliveTimeout: 5000 }, (_req, res) => {
  res.writeHead(200, headers);
  res.end(body);
});
server.listen(0, '127.0.0.1', () => {
  console.log(`listening on http://127.0.0.1:${server.address().port}`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
