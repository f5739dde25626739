// The few lines a person at a terminal sees once the services are up (LOG_FORMAT=pretty): where
// each service is, its docs and status pages, and something to try.
import type { Config, ServiceName } from './config.ts';

/** What to open on each service besides its root (the skins service documents all three). */
const PAGES: Record<ServiceName, string[]> = {
  skins: ['/docs', '/status'],
  media: ['/health'],
  search: ['/health'],
};

/** The address a browser on this machine reaches a listen address by. */
export function reachableHost(host: string): string {
  if (host === '0.0.0.0' || host === '::' || host === '') return 'localhost';
  return host.includes(':') ? `[${host}]` : host;
}

export function banner(config: Config, ports: Partial<Record<ServiceName, number>>): string {
  const host = reachableHost(config.host);
  const lines = ['', 'Skinfarm is ready'];
  for (const name of config.services) {
    const base = `http://${host}:${ports[name]}`;
    lines.push(`  ${name.padEnd(7)} ${base.padEnd(24)} ${PAGES[name].map((p) => base + p).join('  ')}`);
  }
  if (ports.skins !== undefined) {
    lines.push(`  try     http://${host}:${ports.skins}/v1/render/${encodeURIComponent(config.demoPlayer)}/256`);
  }
  lines.push('  No network? `npm run demo` runs every service against a built-in fake of the upstreams.');
  lines.push('  Ctrl-C stops (requests in progress finish first).', '');
  return lines.join('\n');
}
