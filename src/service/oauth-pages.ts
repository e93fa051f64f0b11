/**
 * The HTML of the local OAuth provider's consent page and of the callback's result pages. Small,
 * self-contained pages: no scripts, inline styles only, every interpolated value escaped.
 */

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => ESCAPES[c] as string);

/** Headers for every page: no framing (clickjacking of Approve), no scripts, no referrer (codes in URLs). */
export const PAGE_HEADERS: Record<string, string> = {
  'Content-Type': 'text/html; charset=utf-8',
  'Cache-Control': 'no-store',
  'Content-Security-Policy':
    "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'",
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
  'X-Content-Type-Options': 'nosniff',
};

function layout(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>
body { font-family: system-ui, sans-serif; max-width: 32rem; margin: 4rem auto; padding: 0 1rem; color: #222; }
.card { border: 1px solid #ccc; border-radius: 8px; padding: 1.5rem; }
button { font-size: 1rem; padding: 0.5rem 1.25rem; margin-right: 0.5rem; border-radius: 6px; border: 1px solid #888; cursor: pointer; }
button.approve { background: #1f6feb; color: #fff; border-color: #1f6feb; }
</style>
</head>
<body>
<main class="card">
${body}
</main>
</body>
</html>
`;
}

/** `fields`: hidden fields the form posts back (the authorization request's parameters). */
export function consentPage(input: {
  provider: string;
  account: string;
  action: string;
  fields: Record<string, string>;
}): string {
  const hidden = Object.entries(input.fields)
    .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`)
    .join('\n');
  return layout(
    `Connect ${input.provider}`,
    `<h1>Connect to ${escapeHtml(input.provider)}</h1>
<p><strong>facectl (local Face Compilation Service)</strong> asks to use your ${escapeHtml(input.provider)} account
<strong id="account">${escapeHtml(input.account)}</strong> for compile interviews.</p>
<form method="post" action="${escapeHtml(input.action)}">
${hidden}
<button type="submit" class="approve" name="decision" value="approve">Approve</button>
<button type="submit" class="deny" name="decision" value="deny">Deny</button>
</form>`,
  );
}

export function resultPage(title: string, message: string): string {
  return layout(title, `<h1>${escapeHtml(title)}</h1>\n<p>${escapeHtml(message)}</p>`);
}
