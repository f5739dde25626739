// E-mail facts: the parts of the address and whether its domain is a public free-mail service.
import { parseEmail } from '../../values/email.ts';
import { analyserSource } from './analyser.ts';

// Large public mailbox services, by domain. Not exhaustive: a miss means "not known as free-mail".
const FREE_MAIL: Record<string, string> = {
  'gmail.com': 'Gmail', 'googlemail.com': 'Gmail',
  'outlook.com': 'Outlook.com', 'hotmail.com': 'Outlook.com', 'live.com': 'Outlook.com', 'msn.com': 'Outlook.com',
  'yahoo.com': 'Yahoo Mail', 'ymail.com': 'Yahoo Mail', 'aol.com': 'AOL Mail',
  'icloud.com': 'iCloud Mail', 'me.com': 'iCloud Mail', 'mac.com': 'iCloud Mail',
  'proton.me': 'Proton Mail', 'protonmail.com': 'Proton Mail', 'tutanota.com': 'Tuta', 'tuta.io': 'Tuta',
  'gmx.com': 'GMX', 'gmx.de': 'GMX', 'gmx.net': 'GMX', 'web.de': 'WEB.DE', 'mail.com': 'mail.com', 'zoho.com': 'Zoho Mail',
  'yandex.ru': 'Yandex Mail', 'yandex.com': 'Yandex Mail', 'ya.ru': 'Yandex Mail',
  'mail.ru': 'Mail.ru', 'inbox.ru': 'Mail.ru', 'list.ru': 'Mail.ru', 'bk.ru': 'Mail.ru', 'rambler.ru': 'Rambler',
  'qq.com': 'QQ Mail', '163.com': 'NetEase Mail', '126.com': 'NetEase Mail', 'naver.com': 'Naver Mail',
};

export function analyseEmail(value: string): Record<string, unknown> {
  const { local, host, literal } = parseEmail(value)!;
  const provider = host ? FREE_MAIL[host.hostname] ?? FREE_MAIL[host.domain] ?? null : null;
  const plus = local.indexOf('+');
  return {
    local_part: local,
    domain: host?.hostname ?? null,
    registrable_domain: host?.domain ?? null,
    address_literal: literal,
    subaddress: plus > 0 ? local.slice(plus + 1) : null,
    free_mail: provider !== null,
    provider,
  };
}

export const emailAnalyser = analyserSource('email_analyser', 'email', 'Address parts and free-mail provider check', analyseEmail);
