// The query types of the search API and the shapes its modules pass around.

export const SEARCH_TYPES = ['phone', 'email', 'messenger_user', 'network_user', 'social_id', 'fio', 'ip', 'domain', 'mac', 'email_sha256', 'phone_sha256'] as const;
export type SearchType = typeof SEARCH_TYPES[number];
export type TypeParam = SearchType | 'auto';

/**
 * A value together with the type it was normalised as. `match` marks a query pattern (`*@domain`,
 * a `prefix*`): `value` is then the domain or the prefix, and only sources with `patterns` answer it.
 */
export interface TypedValue { type: SearchType; value: string; match?: 'domain' | 'prefix' }

export interface TypeInfo { type: TypeParam; description: string; example: string }

/** What /v1/types answers; also the documentation of each type's accepted forms. */
export const TYPE_INFO: readonly TypeInfo[] = [
  { type: 'auto', description: 'Detect the type from the value (the default). Bare digits are read as social_id; write phones with +country code.', example: '+1 202-555-0143' },
  { type: 'phone', description: 'Phone number, normalised to E.164: +country, 00 or tel: URIs; extensions are dropped. Without a country code it is read in the service\'s region (SEARCH_DEFAULT_REGION), named in the answer\'s assumed_region.', example: '+12025550143' },
  { type: 'email', description: 'E-mail address, lower-cased and syntax-checked; mailto: links, "Name <address>", quoted local parts and address literals are taken. *@domain finds every address at that domain (not its subdomains).', example: 'ada.example@example.org' },
  { type: 'messenger_user', description: 'Messenger user name written as @name (3-32 letters, digits or _), or a t.me/name link. A trailing * after at least 3 characters finds the names starting so (@ada*).', example: '@ada_example' },
  { type: 'network_user', description: 'Plain user name on a network or game (letters, digits, _ . -), or a game account UUID. A trailing * after at least 3 characters finds the names starting so (ada_*).', example: 'ada_example' },
  { type: 'social_id', description: 'Numeric account id on a social network (1-20 digits).', example: '100200300' },
  { type: 'fio', description: 'Full name: two or three name words in one script (Latin, Cyrillic, Greek) with initials and particles, or a Chinese name of 2-4 characters. Matching ignores case. A trailing * after at least 3 characters finds the names starting so (Ada Ex*).', example: 'Ada Example' },
  { type: 'ip', description: 'IPv4 (dotted decimal) or IPv6 address; brackets, a port and an IPv6 zone id (%eth0) are taken off.', example: '192.0.2.10' },
  { type: 'domain', description: 'Host or domain name (a URL is reduced to its host); analysed into registrable domain and suffix.', example: 'mail.example.org' },
  { type: 'mac', description: 'MAC address or EUI-64 in any common notation (aa:bb.., aa-bb.., aa bb.., a:b.. unpadded, aabb.ccdd.eeff, aabbccddeeff); answered in colon form.', example: '00:00:5e:00:53:01' },
  { type: 'email_sha256', description: 'SHA-256 (64 hex digits, either case; answered in small letters) of a normalised e-mail address (as type email writes it: lower-cased), for a client that must not send the address. Finds the rows holding that address; explicit type only.', example: '980ac84a6d604759924759e57a1fc03f1a31ea6736fef5846c6b7cbee43a0632' },
  { type: 'phone_sha256', description: 'SHA-256 (64 hex digits, either case; answered in small letters) of a normalised phone number (E.164, as type phone writes it: +12025550143). Explicit type only.', example: '54af34308301e43f00650baaeb6cf4925b942201d74191b26d48292cfec907fd' },
];

export function isSearchType(value: string): value is SearchType {
  return (SEARCH_TYPES as readonly string[]).includes(value);
}

/**
 * The identity of a typed value: index postings, de-duplication and matching. Names keep their
 * written casing (McDonald) but match whatever the casing.
 */
export function typedKey(v: TypedValue): string {
  return `${v.type}:${v.type === 'fio' ? v.value.toLowerCase() : v.value}`;
}

/** How a value is named in the answer (cross_results keys): `type:value` as normalised. */
export const displayKey = (v: TypedValue) => `${v.type}:${v.value}`;
