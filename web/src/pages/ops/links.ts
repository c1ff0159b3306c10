// A link of the api (a signed download, the public logo file) as a path on this origin: the links name
// PUBLIC_BASE_URL, and the api that serves the dashboard answers the same paths, so the page keeps to 'self' (its CSP)
// wherever the operator's public address points.
export function here(url: string): string {
  const u = new URL(url, window.location.origin);
  return `${u.pathname}${u.search}${u.hash}`;
}
