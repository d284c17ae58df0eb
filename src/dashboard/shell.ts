import { CSS_NAME, JS_NAME } from './assets.generated.js';

/** Text safe inside an HTML attribute or element. */
export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}

/** What the page tells the script: the public base URL and, on share pages, the shared project. */
export interface ShellOptions {
  base: string;
  title: string;
  share?: { domain: string; name: string; brandColor: string | null };
}

/** A brand color the page may put in CSS: only `#rrggbb` (PATCH validates it; checked again here). */
const safeColor = (color: string | null | undefined) => (color && /^#[0-9a-fA-F]{6}$/.test(color) ? color : null);

/**
 * The HTML document of the app and of share pages. Everything dynamic travels in data-attributes
 * (no inline script), so the Content-Security-Policy can forbid inline scripts.
 */
export function renderShell(opts: ShellOptions): string {
  const attrs = [`data-base="${escapeHtml(opts.base)}"`];
  if (opts.share) {
    attrs.push(`data-share="${escapeHtml(opts.share.domain)}"`, `data-name="${escapeHtml(opts.share.name)}"`);
  }
  const brand = safeColor(opts.share?.brandColor);
  if (brand) attrs.push(`data-brand="${brand}"`);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(opts.title)}</title>
<link rel="stylesheet" href="/assets/${CSS_NAME}">
<script type="module" src="/assets/${JS_NAME}"></script>
</head>
<body ${attrs.join(' ')}>
<noscript>The Sightline dashboard needs JavaScript.</noscript>
<main id="app" aria-live="polite"><p class="loading">Loading…</p></main>
</body>
</html>
`;
}

/** The page a disabled or unknown share link shows (served with 404). */
export function renderNotFound(): string {
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Not found · Sightline</title>
<link rel="stylesheet" href="/assets/${CSS_NAME}"></head>
<body><main class="center-card"><h1>Page not found</h1><p>These statistics are not public, or the site does not exist.</p><p><a href="/">Go to Sightline</a></p></main></body>
</html>
`;
}
