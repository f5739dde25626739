// Full names (fio) as written in the world's records: two or three name words in one script
// (Latin, Cyrillic or Greek), with initials (Иванов И. И., J. R. Tolkien) and lower-case
// particles (María de los Ángeles Pérez, Ludwig van Beethoven), or a Chinese name of two to
// four Han characters. Casing: a word written all in capitals or all in small letters is
// capitalised; a word in mixed case (McDonald, DiCaprio) is kept as written. Matching ignores
// case (typedKey folds it), so MCDONALD and McDonald find each other.

const SCRIPTS = ['Latin', 'Cyrillic', 'Greek'].map((script) => ({
  word: new RegExp(`^\\p{Script=${script}}+(?:['’-]\\p{Script=${script}}+)*$`, 'u'),
  initial: new RegExp(`^\\p{Script=${script}}\\.$`, 'u'),
}));
const HAN_NAME = /^\p{Script=Han}{2,4}$/u;

/** Name particles that stay in small letters inside a name (not as its first word). */
const PARTICLES = new Set(['de', 'del', 'della', 'der', 'den', 'di', 'da', 'das', 'do', 'dos', 'du', 'la', 'le', 'los', 'las', 'van', 'von', 'ten', 'ter', 'y', 'e', 'bin', 'ibn', 'al', 'el', 'zu', 'af']);

const MAX_NAME_WORDS = 3;
const MAX_WORDS = 7;

const capitalise = (word: string) => word.toLowerCase().replace(/(^|['’-])(\p{L})/gu, (_, sep: string, letter: string) => sep + letter.toUpperCase());

function caseWord(word: string, position: number): string {
  const mixed = word !== word.toLowerCase() && word !== word.toUpperCase();
  if (mixed) return word;
  if (position > 0 && PARTICLES.has(word.toLowerCase())) return word.toLowerCase();
  return capitalise(word);
}

export function normaliseName(raw: string): string | null {
  const text = raw.trim();
  if (HAN_NAME.test(text.replace(/[\s·・]/g, ''))) return text.replace(/[\s·・]/g, '');
  // Joined initials (И.И.) are two initials.
  const words = text.split(/\s+/).flatMap((w) => (/^(?:\p{L}\.){2,3}$/u.test(w) ? w.match(/\p{L}\./gu)! : [w]));
  if (words.length < 2 || words.length > MAX_WORDS || words.some((w) => w.length > 40)) return null;
  // One script for the whole name: a mix is a typo at best and a look-alike trick at worst.
  const script = SCRIPTS.find((s) => words.every((w) => s.word.test(w) || s.initial.test(w)));
  if (!script) return null;
  let names = 0;
  let initials = 0;
  words.forEach((w, i) => {
    if (script.initial.test(w)) initials += 1;
    else if (i === 0 || !PARTICLES.has(w.toLowerCase())) names += 1;
  });
  if (names < 1 || names > MAX_NAME_WORDS || names + initials < 2) return null;
  return words.map((w, i) => (script.initial.test(w) ? w.toUpperCase() : caseWord(w, i))).join(' ');
}
