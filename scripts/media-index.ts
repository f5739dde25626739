// Media admin CLI.
//   node scripts/media-index.ts scan [DIR]        index DIR (default MEDIA_DIR or ./media) exactly as
//                                                 the service does; print categories, counts, time;
//                                                 skipped files are logged on stderr
//   node scripts/media-index.ts hash-password     read a password (hidden prompt, or stdin when piped)
//                                                 and print a MEDIA_PASSWORD_HASH value
import { Library } from '../api/media/library.ts';
import { summarize } from '../api/media/landing.ts';
import { hashPassword } from '../api/media/password.ts';
import { LibraryScanner } from '../api/media/scanner.ts';
import { createLogger } from '../shared/log.ts';

async function scan(dir: string): Promise<void> {
  const library = new Library();
  const scanner = new LibraryScanner(dir, library, createLogger('warn', {}, (line) => process.stderr.write(line)));
  const started = performance.now();
  await scanner.syncRoot(true);
  const ms = performance.now() - started;
  const { categories } = summarize(library.categories(), 0);
  const header = ['alias', 'name', 'private', 'files', 'images', 'videos', 'landscape', 'portrait', 'square'];
  const rows = categories.map((c) => [c.alias, c.name, c.private ? 'yes' : 'no', ...[c.files, c.images, c.videos, c.landscape, c.portrait, c.square].map(String)]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  for (const row of [header, ...rows]) console.log(row.map((cell, i) => cell.padEnd(widths[i])).join('  ').trimEnd());
  console.log(`\n${library.size} files in ${categories.length} categories, indexed in ${Math.round(ms)} ms (${scanner.root})`);
}

/** A password from a hidden terminal prompt, or the first line of piped input. */
async function readPassword(): Promise<string> {
  const { stdin } = process;
  if (!stdin.isTTY) {
    let text = '';
    for await (const chunk of stdin) text += chunk;
    return text.split(/\r?\n/)[0];
  }
  process.stderr.write('Password (hidden): ');
  stdin.setRawMode(true);
  stdin.setEncoding('utf8');
  let password = '';
  for await (const chunk of stdin as AsyncIterable<string>) {
    for (const ch of chunk) {
      if (ch === '\u0003') process.exit(130); // Ctrl+C
      if (ch === '\r' || ch === '\n') {
        stdin.setRawMode(false);
        process.stderr.write('\n');
        stdin.pause();
        return password;
      }
      password = ch === '\u007f' ? password.slice(0, -1) : password + ch;
    }
  }
  return password;
}

const [command, arg] = process.argv.slice(2);
if (command === 'scan') {
  await scan(arg ?? process.env.MEDIA_DIR ?? './media');
} else if (command === 'hash-password') {
  const password = await readPassword();
  if (!password) {
    console.error('empty password');
    process.exit(1);
  }
  console.log(await hashPassword(password));
} else {
  console.error('usage: node scripts/media-index.ts scan [DIR] | hash-password');
  process.exit(64);
}
