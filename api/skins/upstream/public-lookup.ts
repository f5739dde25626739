// Name resolution for downloads from hosts an upstream named (the external site's skinDomains):
// a public name can still resolve to loopback or a private network (a DNS record the site's
// owner controls, or rebinding), so every address it resolves to that is not public unicast is
// dropped before the connection is made, and a name left with none fails like a name that does
// not exist. The operator's own lists (TEXTURE_HOSTS, the configured base URLs) do not go through
// here: those may rightly be internal.
import dns, { type LookupAddress, type LookupOptions } from 'node:dns';
import ipaddr from 'ipaddr.js';

/** Whether an address is public unicast (not loopback, private, link-local, CGNAT, reserved, multicast…). */
export function isPublicAddress(address: string): boolean {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.process(address.replace(/%.*$/, ''));
  } catch {
    return false;
  }
  return parsed.range() === 'unicast';
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;
type Resolve = (hostname: string, options: LookupOptions & { all: true }, callback: (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void) => void;

/**
 * A `dns.lookup` (the shape got's `dnsLookup` and `net.connect` take) that answers only public
 * addresses of a name. `resolve` is the system resolver; another is given only where a test
 * needs a name to resolve to an address of its choosing.
 */
export function publicOnlyLookup(resolve: Resolve = dns.lookup as unknown as Resolve) {
  return (hostname: string, options: LookupOptions | number | undefined, callback: LookupCallback): void => {
    const asked: LookupOptions = typeof options === 'number' ? { family: options } : options ?? {};
    resolve(hostname, { ...asked, all: true }, (error, addresses) => {
      if (error) return callback(error, []);
      const usable = addresses.filter((a) => isPublicAddress(a.address));
      if (usable.length === 0) {
        const refused: NodeJS.ErrnoException = new Error(`${hostname} resolves to no public address`);
        refused.code = 'ENOTFOUND';
        return callback(refused, []);
      }
      if (asked.all) callback(null, usable);
      else callback(null, usable[0].address, usable[0].family);
    });
  };
}
