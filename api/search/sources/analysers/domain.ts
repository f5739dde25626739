// Domain facts from the public suffix list: registrable domain, suffix and subdomain.
import { domainToUnicode } from 'node:url';
import { parseDomain } from '../../values/domain.ts';
import { analyserSource } from './analyser.ts';

export function analyseDomain(value: string): Record<string, unknown> {
  const parts = parseDomain(value)!;
  return {
    hostname: parts.hostname,
    registrable_domain: parts.domain,
    suffix: parts.suffix,
    suffix_kind: parts.icann ? 'icann' : 'private',
    subdomain: parts.subdomain || null,
    labels: parts.hostname.split('.').length,
    unicode: parts.hostname.includes('xn--') ? domainToUnicode(parts.hostname) : null,
  };
}

export const domainAnalyser = analyserSource('domain_analyser', 'domain', 'Registrable domain, public suffix and subdomain (public suffix list)', analyseDomain);
