// Phone numbers as people and spreadsheets write them: +country or a 00 / the region's own
// international prefix, tel: URIs (RFC 3966), extensions, en dashes and non-breaking spaces.
// A number without any of those is national and read in the configured region.
import { getCountryCallingCode, isSupportedCountry, parsePhoneNumberFromString, type CountryCode, type PhoneNumber } from 'libphonenumber-js/max';

/**
 * SEARCH_DEFAULT_REGION's default. US because the generated data, the documentation and the
 * fake upstream use North American 555-01xx numbers, and because indexes built before the
 * setting existed read national numbers as US; every answer that relied on it says so.
 */
export const DEFAULT_REGION: CountryCode = 'US';

/** An ISO 3166 alpha-2 code with a numbering plan (upper case), or null. */
export function parseRegion(raw: string): CountryCode | null {
  const code = raw.trim().toUpperCase();
  return /^[A-Z]{2}$/.test(code) && isSupportedCountry(code) ? code as CountryCode : null;
}

export interface PhoneReading {
  phone: PhoneNumber;
  /** The region the number was read in when it carried no country code; null when it did. */
  assumedRegion: CountryCode | null;
}

// Hyphen, non-breaking hyphen, figure dash, en dash, em dash, horizontal bar, minus sign.
const DASHES = /[\u2010-\u2015\u2212]/g;
// No-break, figure, thin and narrow no-break spaces (spreadsheets and word processors).
const SPACES = /[\u00a0\u2007\u2009\u202f]/g;
// An extension at the end (", ext. 12", " x12", " #12", " доб. 12"), found from its marker: a lazy
// prefix before the separators' \s* runs, matched from the start, tried every split of a run of
// spaces (65 ms for 510 of them).
const EXTENSION = /(?:ext\.?|extension|x|#|доб\.?)\s*\d{1,7}$/i;
const MAIN_NUMBER = /^(?:\+|00)?[\d\s()./-]{4,32}$/;
const TEL_URI = /^tel:\+?[\d().-]{4,32}(?:;[a-z0-9-]+=[^;\s]{0,64}){0,4}$/i;

/** The text without its extension and the separators before it (spaces, one comma or semicolon). */
function withoutExtension(text: string): string {
  const ext = EXTENSION.exec(text);
  return ext ? text.slice(0, ext.index).trimEnd().replace(/[,;]$/, '').trimEnd() : text;
}

/** A valid number and whether its country came from `region`; null when it is not a number. */
export function readPhone(raw: string, region: CountryCode = DEFAULT_REGION): PhoneReading | null {
  let text = raw.trim().replace(DASHES, '-').replace(SPACES, ' ');
  if (/^tel:/i.test(text)) {
    if (!TEL_URI.test(text)) return null;
  } else {
    text = withoutExtension(text);
    if (!MAIN_NUMBER.test(text)) return null;
    // 00 is the international prefix of most of the world (the region's own, such as the
    // US's 011, is understood by the library), so it means + whatever the region.
    if (text.startsWith('00')) text = `+${text.slice(2)}`;
  }
  const international = /^(?:tel:)?\+/i.test(text);
  const phone = parsePhoneNumberFromString(text, region);
  if (!phone?.isValid()) return null;
  // Without + the country code may still have come through the region's own prefix (011 86 ...).
  const fromRegion = !international && phone.countryCallingCode === getCountryCallingCode(region);
  return { phone, assumedRegion: fromRegion ? region : null };
}

/** Whether `auto` should try the text as a national number: digits with separators, maybe an extension. */
export function looksLikeNationalPhone(raw: string): boolean {
  const text = raw.trim().replace(DASHES, '-').replace(SPACES, ' ');
  const main = withoutExtension(text);
  return /^[\d\s()./-]+$/.test(main) && /[\s()./-]/.test(main);
}
