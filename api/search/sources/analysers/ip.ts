// IP facts: version, the special-purpose range it falls in, and its reverse-DNS name.
import ipaddr from 'ipaddr.js';
import { parseIp } from '../../values/ip.ts';
import { analyserSource } from './analyser.ts';

// ipaddr.js files these under "reserved"; they deserve their own name (RFC 5737, RFC 3849).
const DOCUMENTATION = ['192.0.2.0/24', '198.51.100.0/24', '203.0.113.0/24', '2001:db8::/32'].map((cidr) => ipaddr.parseCIDR(cidr));
const NOT_ROUTED = new Set(['private', 'uniqueLocal', 'loopback', 'linkLocal', 'carrierGradeNat', 'unspecified']);

function reversePointer(address: ipaddr.IPv4 | ipaddr.IPv6): string {
  if (address.kind() === 'ipv4') return `${[...address.toByteArray()].reverse().join('.')}.in-addr.arpa`;
  const nibbles = (address as ipaddr.IPv6).parts.map((part) => part.toString(16).padStart(4, '0')).join('');
  return `${[...nibbles].reverse().join('.')}.ip6.arpa`;
}

export function analyseIp(value: string): Record<string, unknown> {
  const address = parseIp(value)!;
  const documentation = DOCUMENTATION.some(([net, bits]) => net.kind() === address.kind() && address.match(net, bits));
  const range = documentation ? 'documentation' : address.range();
  return {
    address: value,
    version: address.kind() === 'ipv4' ? 4 : 6,
    range,
    private: NOT_ROUTED.has(range),
    reserved: documentation || range === 'reserved',
    global_unicast: range === 'unicast',
    reverse_pointer: reversePointer(address),
  };
}

export const ipAnalyser = analyserSource('ip_analyser', 'ip', 'IP version, special-purpose range (private, reserved, documentation...) and reverse-DNS name', analyseIp);
