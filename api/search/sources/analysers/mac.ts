// MAC facts: the IEEE registration block and vendor (oui-data), and the two flag bits.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { analyserSource } from './analyser.ts';

/** Registry prefix (6, 7 or 9 upper-case hex digits) -> "Vendor\nAddress lines\nCountry". */
let registry: Record<string, string> | null = null;

// 5 MB of JSON: read on the first MAC query, not at every start.
function vendors(): Record<string, string> {
  registry ??= JSON.parse(readFileSync(fileURLToPath(import.meta.resolve('oui-data')), 'utf8')) as Record<string, string>;
  return registry;
}

// Longest block first: MA-S (36-bit), MA-M (28-bit), MA-L (24-bit).
const BLOCKS = [[9, 'MA-S'], [7, 'MA-M'], [6, 'MA-L']] as const;

export function analyseMac(value: string): Record<string, unknown> {
  const hex = value.replaceAll(':', '').toUpperCase();
  const firstByte = parseInt(hex.slice(0, 2), 16);
  const locallyAdministered = (firstByte & 0b10) !== 0;
  let vendor: string | null = null;
  let block: string | null = null;
  if (!locallyAdministered) {
    for (const [length, name] of BLOCKS) {
      const entry = vendors()[hex.slice(0, length)];
      if (entry) {
        vendor = entry;
        block = name;
        break;
      }
    }
  }
  const lines = vendor?.split('\n') ?? [];
  return {
    mac: value,
    oui: value.slice(0, 8),
    vendor: lines[0] ?? null,
    vendor_country: lines.length > 1 ? lines[lines.length - 1] : null,
    registry_block: block,
    multicast: (firstByte & 0b1) !== 0,
    locally_administered: locallyAdministered,
  };
}

export const macAnalyser = analyserSource('mac_analyser', 'mac', 'Vendor from the IEEE OUI registry (oui-data), multicast and locally-administered bits', analyseMac);
