// The baseline service: node:http that reads the JSON body, parses it and answers a small JSON object.
// Prints {"base_url": ...} as its first line, like `facectl serve --json`.
import { createServer } from 'node:http';

let n = 0;
const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    let status = 201;
    let body;
    try {
      const doc = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      body = JSON.stringify({ document_id: `doc_${++n}`, label: doc.label, token_count: 0 });
    } catch {
      status = 400;
      body = '{"detail":"bad json","code":"invalid_json"}';
    }
    res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
    res.end(body);
  });
});
server.keepAliveTimeout = 30_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ base_url: `http://127.0.0.1:${server.address().port}` })}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
