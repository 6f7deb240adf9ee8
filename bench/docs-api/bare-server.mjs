// The reference of bench/docs-api/static-page.mjs: the least a node:http server can do to send the
// docs server's answers. It holds the exact bytes the docs server sent for each path (already
// compressed) in memory and answers every request for that path with them, with only the headers
// a client needs to use them.
//
// Usage: node bare-server.mjs <answers.json>, a list of { path, bodyFile, contentType,
// contentEncoding }; prints its URL.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

const answers = new Map();
for (const { path, bodyFile, contentType, contentEncoding } of JSON.parse(
  readFileSync(process.argv[2], 'utf8'),
)) {
  const body = readFileSync(bodyFile);
  const headers = {
    'Content-Type': contentType,
    'Content-Length': body.length,
    ...(contentEncoding && contentEncoding !== 'identity' ? { 'Content-Encoding': contentEncoding } : {}),
  };
  answers.set(path, { body, headers });
}

const server = createServer({ keepAliveTimeout: 5000 }, (req, res) => {
  const answer = answers.get(req.url);
  if (!answer) {
    res.writeHead(404, { 'Content-Length': 0 });
    res.end();
    return;
  }
  res.writeHead(200, answer.headers);
  res.end(answer.body);
});
server.listen(0, '127.0.0.1', () => {
  console.log(`listening on http://127.0.0.1:${server.address().port}`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
