// Writes docs/configuration.md from the configuration's own reads (api/config.ts describeConfig):
// each variable's name, default, rule and meaning as the code declares them, so the page cannot
// drift from what the service does; and docs/security.md's table of rate-limit groups from the
// route tables (limit-groups-doc.ts). test/config-docs.test.ts fails when either is stale.
//   npm run config-docs
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describeConfig } from '../api/config.ts';
import type { Declared } from '../api/settings.ts';
import { SECURITY_PAGE, withLimitGroups } from './limit-groups-doc.ts';

export const PAGE = path.join(import.meta.dirname, '../docs/configuration.md');

const INTRO = `# Configuration

<!-- Written by \`npm run config-docs\` from the reads in api/config.ts and api/media/config.ts: change them, not this page. -->

Environment variables, validated at start-up: a wrong value stops the process with exit code 78
and a message that names every such variable and its allowed range. Any other start-up failure (a
port in use, a render farm that cannot start) is one \`start-up failed\` log line and exit code 1.

Every variable of every service is read and checked in one pass before anything starts. Unset or
empty means the default. Integers are plain decimal digits (\`0x40\`, \`1e2\` are refused); true or
false is also written \`1\`/\`0\`, \`yes\`/\`no\`, \`on\`/\`off\`; words such as \`LOG_LEVEL\`'s are
taken in any case. Values that may hold a password (secrets, connection URLs) are never repeated in
a message.
`;

/** A Markdown table cell: its pipes escaped, so a meaning cannot split the row. */
const cell = (text: string) => text.replaceAll('|', '\\|');

function row(variable: Declared): string {
  // A rule is the problem's plain text: its `<placeholders>` are not HTML.
  const rule = variable.rule.replaceAll('<', '&lt;');
  return `| \`${variable.name}\` | ${[variable.default, rule, variable.meaning].map(cell).join(' | ')} |`;
}

export function configurationPage(): string {
  const sections = describeConfig().map(({ title, variables }) =>
    [`## ${title}`, '', '| variable | default | a set value must | meaning |', '|---|---|---|---|', ...variables.map(row)].join('\n'));
  return `${INTRO}\n${sections.join('\n\n')}\n`;
}

if (import.meta.main) {
  writeFileSync(PAGE, configurationPage());
  writeFileSync(SECURITY_PAGE, withLimitGroups(readFileSync(SECURITY_PAGE, 'utf8')));
  console.log(`wrote ${path.relative(process.cwd(), PAGE)} and the limit groups of ${path.relative(process.cwd(), SECURITY_PAGE)}`);
}
