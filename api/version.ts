// The version every service reports and the User-Agent of every upstream call: package.json's,
// read once.
import { readFileSync } from 'node:fs';

export const VERSION: string = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version;

export const USER_AGENT = `Skinfarm/${VERSION}`;
