import { verb } from './kit.js';

export default verb({
  description: 'Print the OpenAPI 3.1 document generated from the interface contract.',
  examples: ['facectl openapi > openapi.json', 'facectl openapi | jq ".paths | keys"'],
  async run(ctx) {
    const { buildOpenApiDocument } = await import('../contract/openapi.js');
    // Indented to be read (`> openapi.json`); under --json, piped, one line as every --json document.
    const indent = ctx.out.json && !ctx.io.stdoutIsTTY ? 0 : 2;
    ctx.out.text(`${JSON.stringify(buildOpenApiDocument(), null, indent)}\n`);
  },
});
