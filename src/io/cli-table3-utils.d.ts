// cli-table3's own word wrap and width (src/utils.js, no types of its own): output.ts wraps cells with it before drawing.
declare module 'cli-table3/src/utils.js' {
  const utils: {
    wordWrap(maxLength: number, input: string, wrapOnWordBoundary?: boolean): string[];
    strlen(text: string): number;
  };
  export default utils;
}
