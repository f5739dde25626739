// Prints the Chromium the render farm will use, unpacking the bundled one first if needed.
// `npm test` runs it once before the suite, so its first tests do not wait for the unpacking.
import { resolveChromium } from '../renderer/browser.ts';

const resolved = await resolveChromium(process.env.CHROMIUM_PATH ?? null);
console.log(`chromium: ${resolved.executablePath} (${resolved.origin})`);
