/** A Hono-style path (`/api/v1/projects/:domain/hits`, `:param` for one segment) as a whole-path RegExp; a trailing slash is allowed. */
export const routePattern = (path: string): RegExp =>
  new RegExp(`^${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:[A-Za-z_][A-Za-z0-9_]*/g, '[^/]+')}/?$`);
