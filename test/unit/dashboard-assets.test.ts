import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { DASHBOARD_MODULE, renderDashboardModule } from '../../scripts/build-dashboard.js';
import { CSS_NAME, DASHBOARD_CSS, DASHBOARD_JS, JS_NAME } from '../../src/dashboard/assets.generated.js';
import { dashboardRoutes } from '../../src/dashboard/routes.js';
import { escapeHtml, renderShell } from '../../src/dashboard/shell.js';

describe('dashboard assets', () => {
  it('assets.generated.ts is up to date with src/dashboard/client (run `npm run build:dashboard`)', async () => {
    expect(readFileSync(DASHBOARD_MODULE, 'utf8')).toBe(await renderDashboardModule());
  });

  it('first load (JS + CSS) is at most 80 KB gzipped', () => {
    const gz = gzipSync(Buffer.from(DASHBOARD_JS)).length + gzipSync(Buffer.from(DASHBOARD_CSS)).length;
    expect(gz).toBeGreaterThan(10_000);
    expect(gz).toBeLessThanOrEqual(80 * 1024);
  });

  it('serves hashed assets with immutable caching, ETag and 304', async () => {
    const app = dashboardRoutes();
    const res = await app.request(`/assets/${JS_NAME}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/javascript; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    const etag = res.headers.get('etag')!;
    expect(etag).toMatch(/^"[\w-]{22}"$/);
    expect(await res.text()).toBe(DASHBOARD_JS);
    expect((await app.request(`/assets/${JS_NAME}`, { headers: { 'If-None-Match': etag } })).status).toBe(304);
    const css = await app.request(`/assets/${CSS_NAME}`);
    expect(css.headers.get('content-type')).toBe('text/css; charset=utf-8');
    expect(await css.text()).toContain('.u-legend');
    expect((await app.request('/assets/app.nothere.js')).status).toBe(404);
  });

  it('the shell escapes what it embeds and carries no inline script', () => {
    const html = renderShell({ base: 'https://a.example', title: '<x>', share: { domain: 'a.example', name: '"><script>alert(1)</script>', brandColor: 'red;}' } });
    expect(html).not.toContain('<script>alert');
    expect(html).toContain('&#60;x&#62;');
    expect(html).not.toContain('data-brand');
    expect(html.match(/<script/g)).toHaveLength(1);
    expect(html).toContain(`src="/assets/${JS_NAME}"`);
    expect(escapeHtml(`&<>"'`)).toBe('&#38;&#60;&#62;&#34;&#39;');
  });
});
