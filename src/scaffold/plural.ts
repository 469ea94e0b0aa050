/**
 * The plural resource name of a kind, exactly as kubebuilder derives it.
 *
 * Kubebuilder calls `flect.Pluralize(strings.ToLower(kind))` (gobuffalo/flect
 * v1.0.3, the version its v4 go.mod pins), and the result becomes the CRD's
 * `spec.names.plural` and half of its object name. A TypeScript port of a Go
 * operator must therefore land on the same string, including flect's odd
 * outcomes (`redis` stays `redis`, `feedback` becomes `feedbacks`, `shaman`
 * becomes `shamen`). This module reimplements flect's decision procedure for
 * the inputs kubebuilder gives it: one lowercase word of ASCII letters and
 * digits. The golden table in test/fixtures/plurals/ is produced by flect
 * itself (scripts/plural-golden.sh) and the unit tests hold this port to it.
 *
 * The procedure, in order:
 *  1. a word in the irregular-noun table gets its listed plural;
 *  2. a word that is already a listed plural (or a listed alternative plural)
 *     is returned unchanged;
 *  3. a whole-word acronym is handled by {@link pluralizeAcronym};
 *  4. the first ending rule whose plural or singular ending the word has wins:
 *     a plural ending keeps the word, a singular ending is replaced;
 *  5. otherwise a word ending in "s" is kept and any other word gains an "s".
 */

/** An irregular noun: its plural and how flect lets it take part in matching. */
interface IrregularNoun {
  readonly singular: string;
  readonly plural: string;
  /** Other accepted plurals: a word spelled like one of these is already plural. */
  readonly alsoPlural?: readonly string[];
  /**
   * The plural is not recognised as already plural (flect cannot map it back
   * to this singular, e.g. "media" could come from "medium" or "media").
   */
  readonly pluralNotRecognised?: boolean;
  /** Matches the whole word only, never as the ending of a longer word. */
  readonly wholeWordOnly?: boolean;
}

/** Shorthand for table rows; keeps the table one noun per line. */
function noun(singular: string, plural: string, extra: Omit<IrregularNoun, 'singular' | 'plural'> = {}): IrregularNoun {
  return { singular, plural, ...extra };
}

/** A noun whose plural is spelled like its singular. */
function invariant(word: string, extra: Omit<IrregularNoun, 'singular' | 'plural'> = {}): IrregularNoun {
  return { singular: word, plural: word, ...extra };
}

/**
 * flect's irregular nouns, in the order it tries them as word endings: the
 * first entry that a compound word ends in decides (so "superhuman" meets
 * "human" before "man"). Whole-word lookups do not depend on the order.
 * flect also lists "ID" → "IDs"; its keys are compared case-sensitively, so an
 * all-lowercase word never reaches that entry, and it is left out.
 */
const IRREGULAR_NOUNS: readonly IrregularNoun[] = [
  invariant('graffiti'),
  noun('toe', 'toes', { wholeWordOnly: true }),
  noun('shoe', 'shoes'),
  noun('formula', 'formulas', { alsoPlural: ['formulae'] }),
  noun('agenda', 'agendas'),
  noun('pretorium', 'pretoriums'),
  noun('cookie', 'cookies'),
  noun('movie', 'movies'),
  noun('move', 'moves'),
  noun('hive', 'hives'),
  noun('chive', 'chives'),
  noun('thief', 'thieves'),
  noun('hoof', 'hoofs', { alsoPlural: ['hooves'] }),
  noun('dwarf', 'dwarfs', { alsoPlural: ['dwarves'] }),
  invariant('rice'),
  invariant('news'),
  invariant('money'),
  invariant('jeans'),
  invariant('information'),
  invariant('equipment'),
  noun('tomato', 'tomatoes'),
  noun('potato', 'potatoes'),
  noun('buffalo', 'buffaloes', { alsoPlural: ['buffalos'] }),
  noun('topaz', 'topazes'),
  noun('ache', 'aches'),
  noun('pause', 'pauses'),
  noun('muse', 'muses'),
  noun('misuse', 'misuses'),
  noun('house', 'houses'),
  noun('fuse', 'fuses'),
  noun('excuse', 'excuses'),
  noun('cruse', 'cruses'),
  noun('clause', 'clauses'),
  noun('cause', 'causes'),
  noun('abuse', 'abuses'),
  noun('use', 'uses', { wholeWordOnly: true }),
  noun('vedalia', 'vedalias'),
  noun('alias', 'aliases', { wholeWordOnly: true }),
  noun('basis', 'bases', { pluralNotRecognised: true }),
  noun('base', 'bases'),
  noun('testis', 'testes'),
  noun('thesis', 'theses'),
  noun('oasis', 'oases'),
  noun('genesis', 'geneses'),
  noun('ellipsis', 'ellipses', { pluralNotRecognised: true }),
  noun('crisis', 'crises'),
  noun('axis', 'axes', { wholeWordOnly: true }),
  noun('helix', 'helices', { alsoPlural: ['helixes'] }),
  noun('radix', 'radices', { alsoPlural: ['radixes'] }),
  noun('appendix', 'appendices', { alsoPlural: ['appendixes'] }),
  noun('vortex', 'vortices', { alsoPlural: ['vortexes'] }),
  noun('vertex', 'vertices', { alsoPlural: ['vertexes'] }),
  noun('latex', 'latices', { alsoPlural: ['latexes'] }),
  noun('index', 'indices', { alsoPlural: ['indexes'] }),
  noun('codex', 'codices', { alsoPlural: ['codexes'] }),
  noun('apex', 'apices', { alsoPlural: ['apexes'] }),
  noun('uva', 'uvae'),
  noun('praecava', 'praecavae'),
  noun('postcava', 'postcavae'),
  noun('larva', 'larvae'),
  noun('vita', 'vitae'),
  noun('minutia', 'minutiae'),
  noun('differentia', 'differentiae'),
  noun('vertebra', 'vertebrae'),
  noun('alumna', 'alumnae'),
  noun('genus', 'genera'),
  noun('corpus', 'corpora', { alsoPlural: ['corpuses'] }),
  noun('syllabus', 'syllabi'),
  noun('radius', 'radii', { alsoPlural: ['radiuses'] }),
  // flect's spelling, misspelt or not, is what kubebuilder produces.
  noun('octopus', 'octupuses', { alsoPlural: ['octopi'] }),
  noun('nucleus', 'nuclei', { alsoPlural: ['nucleuses'] }),
  noun('locus', 'loci', { alsoPlural: ['locuses'] }),
  noun('focus', 'foci', { alsoPlural: ['focuses'] }),
  noun('coccus', 'cocci'),
  noun('cactus', 'cacti', { alsoPlural: ['cactuses'] }),
  noun('bacillus', 'bacilli'),
  noun('alumnus', 'alumni', { alsoPlural: ['alumnuses'] }),
  noun('quota', 'quotas'),
  noun('curriculum', 'curriculums', { alsoPlural: ['curricula'] }),
  noun('symposium', 'symposia', { alsoPlural: ['symposiums'] }),
  noun('auditorium', 'auditoria', { alsoPlural: ['auditoriums'] }),
  noun('aquarium', 'aquaria', { alsoPlural: ['aquariums'] }),
  noun('stadium', 'stadiums', { alsoPlural: ['stadia'] }),
  noun('medium', 'media', { alsoPlural: ['mediums'], pluralNotRecognised: true }),
  invariant('media'),
  noun('taxon', 'taxa'),
  noun('phenomenon', 'phenomena'),
  noun('noumenon', 'noumena'),
  noun('mitochondrion', 'mitochondria', { alsoPlural: ['mitochondrions'] }),
  noun('lexicon', 'lexica', { alsoPlural: ['lexicons'] }),
  noun('ganglion', 'ganglia', { alsoPlural: ['ganglions'] }),
  noun('criterion', 'criteria'),
  noun('bureau', 'bureaus', { alsoPlural: ['bureaux'] }),
  noun('fabliau', 'fabliaux'),
  noun('adieu', 'adieux', { alsoPlural: ['adieus'] }),
  noun('person', 'people'),
  noun('die', 'dice', { wholeWordOnly: true }),
  noun('woman', 'women'),
  noun('tooth', 'teeth'),
  noun('mouse', 'mice'),
  noun('louse', 'lice', { wholeWordOnly: true }),
  noun('human', 'humans'),
  noun('man', 'men'),
  noun('goose', 'geese'),
  noun('foot', 'feet'),
  noun('ox', 'oxen', { wholeWordOnly: true }),
  noun('child', 'children'),
  invariant('you'),
  invariant('tuna', { alsoPlural: ['tunas'] }),
  invariant('trout', { alsoPlural: ['trouts'] }),
  invariant('swine', { alsoPlural: ['swines'] }),
  invariant('species'),
  invariant('shrimp', { alsoPlural: ['shrimps'] }),
  invariant('sheep'),
  invariant('series'),
  invariant('salmon', { alsoPlural: ['salmons'] }),
  invariant('police'),
  invariant('moose'),
  invariant('fish', { alsoPlural: ['fishes'] }),
  invariant('deer'),
  invariant('chassis'),
  invariant('blues', { pluralNotRecognised: true }),
  invariant('bison'),
  invariant('beef', { alsoPlural: ['beefs'] }),
  invariant('aircraft'),
];

/**
 * Ending rules, tried after the irregular nouns in this order: [singular
 * ending, plural ending]. Several rows are flect's own quirks and stay as they
 * are because kubebuilder's output follows them (e.g. "-nula" becomes
 * "-bulae", "-ium" becomes "-ia").
 *
 * Some rows of both tables change no plural, because the general rules give
 * the same result ("shoe", "house", "-tive", "-ouse"); flect needs them to
 * singularize. They stay so that both tables can be compared with flect's
 * line by line when kubebuilder moves to a newer flect.
 */
const ENDING_RULES: readonly (readonly [singular: string, plural: string])[] = [
  // -f / -fe → -ves.
  ['tive', 'tives'],
  ['eaf', 'eaves'],
  ['oaf', 'oaves'],
  ['afe', 'aves'],
  ['arf', 'arves'],
  ['rfe', 'rves'],
  ['rf', 'rves'],
  ['lf', 'lves'],
  ['fe', 'ves'],
  // -y → -ies unless a vowel precedes it ("-quy" counts as a consonant + y).
  ['ay', 'ays'],
  ['ey', 'eys'],
  ['oy', 'oys'],
  ['quy', 'quies'],
  ['uy', 'uys'],
  ['y', 'ies'],
  // French -eau → -eaux.
  ['eau', 'eaux'],
  // Latin -a → -ae; flect maps every one of these to "-bulae".
  ['bula', 'bulae'],
  ['dula', 'bulae'],
  ['lula', 'bulae'],
  ['nula', 'bulae'],
  ['vula', 'bulae'],
  // Greek -on → -a.
  ['hedron', 'hedra'],
  // Latin -um → -a, except "-seum".
  ['ium', 'ia'],
  ['seum', 'seums'],
  ['eum', 'ea'],
  ['oum', 'oa'],
  ['stracum', 'straca'],
  ['dum', 'da'],
  ['elum', 'ela'],
  ['ilum', 'ila'],
  ['olum', 'ola'],
  ['ulum', 'ula'],
  ['llum', 'lla'],
  ['ylum', 'yla'],
  ['imum', 'ima'],
  ['ernum', 'erna'],
  ['gnum', 'gna'],
  ['brum', 'bra'],
  ['crum', 'cra'],
  ['terum', 'tera'],
  ['serum', 'sera'],
  ['trum', 'tra'],
  ['antum', 'anta'],
  ['atum', 'ata'],
  ['entum', 'enta'],
  ['etum', 'eta'],
  ['itum', 'ita'],
  ['otum', 'ota'],
  ['utum', 'uta'],
  ['ctum', 'cta'],
  ['ovum', 'ova'],
  // Latin -trix → -trices.
  ['trix', 'trices'],
  // Greek -is → -es, for the endings where that is unambiguous.
  ['iasis', 'iases'],
  ['mesis', 'meses'],
  ['kinesis', 'kineses'],
  ['resis', 'reses'],
  ['gnosis', 'gnoses'],
  ['opsis', 'opses'],
  ['ysis', 'yses'],
  // Sibilants and -o take -es (with the common -o exceptions first).
  ['ouse', 'ouses'],
  ['lause', 'lauses'],
  ['us', 'uses'],
  ['ch', 'ches'],
  ['io', 'ios'],
  ['sh', 'shes'],
  ['ss', 'sses'],
  ['ez', 'ezzes'],
  ['iz', 'izzes'],
  ['tz', 'tzes'],
  ['zz', 'zzes'],
  ['ano', 'anos'],
  ['lo', 'los'],
  ['to', 'tos'],
  ['oo', 'oos'],
  ['o', 'oes'],
  ['x', 'xes'],
];

/**
 * flect's acronyms, lowercased. flect upper-cases a word to look it up here,
 * so its mixed-case entries (gbps, kbps, Mbps, MoCA, WiFi) can never match and
 * are left out.
 */
const ACRONYMS: ReadonlySet<string> = new Set(
  (
    'ok utf8 html json jwt id uuid sql ack acl adsl aes ansi api arp atm bgp bss ccitt chap cidr cir cli cpe cpu crc crt ' +
    'csma cmos dce dec des dhcp dns dram dsl dslam dte dmi eha eia eigrp eof ess fcc fcs fddi ftp gbic gepof hdlc http ' +
    'https iana icmp idf ids ieee ietf imap ip ips isdn isp lacp lan lapb lapf llc mac mc mdf mib mpls mtu nac nat nbma ' +
    'nic nrz nrzi nvram osi ospf oui pap pat pc pim pcm pdu pop3 pots ppp pptp ptt pvst ram rarp rfc rip rll rom rstp ' +
    'rtp rcp sdlc sfd sfp slarp slip smtp sna snap snmp sof sram ssh ssid stp syn tdm tftp tia tofu udp url uri usb utp ' +
    'vc vlan vlsm vpn w3c wan wep wpa www'
  ).split(' '),
);

const PLURAL_OF = new Map<string, string>(IRREGULAR_NOUNS.map((entry) => [entry.singular, entry.plural]));

/** Words flect takes to be plural already: listed plurals and alternatives. */
const ALREADY_PLURAL: ReadonlySet<string> = new Set(
  IRREGULAR_NOUNS.flatMap((entry) => (entry.pluralNotRecognised ? [] : [entry.plural, ...(entry.alsoPlural ?? [])])),
);

/** Every ending rule in precedence order: irregular nouns (as endings) first. */
const ALL_ENDING_RULES: readonly (readonly [singular: string, plural: string])[] = [
  ...IRREGULAR_NOUNS.filter((entry) => !entry.wholeWordOnly).map((entry) => [entry.singular, entry.plural] as const),
  ...ENDING_RULES,
];

/**
 * flect keeps a whole-word acronym in upper case while matching, so none of
 * its lower-case ending rules apply; only its abbreviation rule for a final
 * "S" does, and that result is appended to the original word instead of
 * replacing it ("dns" → "dnsDNSes"). Such a plural is not a valid resource
 * name, which kubebuilder then rejects; we reproduce it so our validation
 * rejects the same kinds.
 */
function pluralizeAcronym(word: string): string {
  const upper = word.toUpperCase();
  return upper.endsWith('S') ? `${word}${upper.slice(0, -1)}Ses` : `${word}s`;
}

/**
 * flect's plural of one lowercase word (ASCII letters and digits, which is
 * what a lowercased kind is). Other inputs are outside what kubebuilder passes
 * and are not guaranteed to match flect.
 */
export function pluralizeWord(word: string): string {
  if (word === '') return '';
  const listed = PLURAL_OF.get(word);
  if (listed !== undefined) return listed;
  if (ALREADY_PLURAL.has(word)) return word;
  if (ACRONYMS.has(word)) return pluralizeAcronym(word);
  for (const [singular, plural] of ALL_ENDING_RULES) {
    // Checking the plural ending first keeps "policies" or "salespeople" as is.
    if (word.endsWith(plural)) return word;
    if (word.endsWith(singular)) return word.slice(0, word.length - singular.length) + plural;
  }
  return word.endsWith('s') ? word : `${word}s`;
}

/**
 * The plural resource name kubebuilder derives from a kind:
 * `flect.Pluralize(strings.ToLower(kind))` (Memcached → memcacheds,
 * NetworkPolicy → networkpolicies, Redis → redis, Medium → media).
 */
export function pluralizeKind(kind: string): string {
  return pluralizeWord(kind.toLowerCase());
}
