// The baseline service: node:http that reads the JSON body, parses it and answers what the interface
// answers for a submitted document: the Document shape, with the content echoed back (the spec makes
// `content` a required field of the response), so both servers write the same bytes per document and
// the ratio measures the local service's own work (authentication, token count, idempotency, storage).
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
      const now = new Date().toISOString();
      body = JSON.stringify({
        document_id: `doc_${++n}`,
        alias: doc.alias,
        label: doc.label,
        source: 'submit',
        version: 1,
        content: doc.content,
        token_count: 0,
        tokens_used: 0,
        tokens_limit: 0,
        synced: false,
        created_at: now,
        updated_at: now,
      });
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
