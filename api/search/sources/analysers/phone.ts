// Phone facts from the numbering plans: country, number type and the usual written forms.
import { readPhone } from '../../values/phone.ts';
import { analyserSource } from './analyser.ts';

export function analysePhone(value: string): Record<string, unknown> {
  // The value is E.164: no region is needed to read it.
  const { phone } = readPhone(value)!;
  return {
    e164: phone.number,
    country: phone.country ?? null,
    calling_code: `+${phone.countryCallingCode}`,
    national_number: phone.nationalNumber,
    number_type: phone.getType()?.toLowerCase() ?? 'unknown',
    formats: { international: phone.formatInternational(), national: phone.formatNational(), rfc3966: phone.getURI() },
  };
}

export const phoneAnalyser = analyserSource('phone_analyser', 'phone', 'Country, number type and formats from the numbering plans (libphonenumber)', analysePhone);
