/**
 * Published fingerprints of the BIRD dev databases (../shared/data/bird/DB_REFERENCE.md):
 * the sha256 of each file in the TASQL_fork Git-LFS copy and in the `dev_20240627` release
 * (as reported by a third-party run; a hint, not an authority). Where both agree there is
 * one row naming both. A user's database whose sha256 is listed here gets `knownAs`.
 */
interface KnownDatabase {
  sha256: string;
  dbId: string;
  sizeBytes: number | null;
  release: string;
}

const BOTH = 'BIRD dev (dev_20240627 and TASQL_fork LFS)';
const LFS = 'BIRD dev (TASQL_fork LFS copy)';
const V0627 = 'BIRD dev (dev_20240627)';

export const KNOWN_DATABASES: readonly KnownDatabase[] = [
  {
    dbId: 'california_schools',
    release: LFS,
    sizeBytes: 11_116_544,
    sha256: 'c0903eec662e63068fd1d14403d3d6c1d473287fc10c4356333ea58f878db983',
  },
  {
    dbId: 'california_schools',
    release: V0627,
    sizeBytes: null,
    sha256: '986817d793479801ed55133e55aa27e335422c0cd3866b54a3d6317b7c5f09c1',
  },
  {
    dbId: 'card_games',
    release: BOTH,
    sizeBytes: 261_820_416,
    sha256: 'c98bdb57fe7474da798b407785544b9af0daaad5d61fd21e2a73309493bc1227',
  },
  {
    dbId: 'codebase_community',
    release: BOTH,
    sizeBytes: 481_419_264,
    sha256: '92101be6d2a9f6adceea59d38f6d1c556087f9eea1432432a21268cb1348036d',
  },
  {
    dbId: 'debit_card_specializing',
    release: BOTH,
    sizeBytes: 34_635_776,
    sha256: 'b3d149ad05746dbbe5116e229e17e18f09c39db43cf117d9ef3441753608b691',
  },
  {
    dbId: 'european_football_2',
    release: LFS,
    sizeBytes: 597_754_880,
    sha256: 'f72f5c9b990371417288a67b27a02e601ef904d45525c2c9f7931fb01001c536',
  },
  {
    dbId: 'european_football_2',
    release: V0627,
    sizeBytes: null,
    sha256: 'e4d361dbeec6591a4b315877c0c481da05c8ff5a3d389b34d6e17b6f15bee4e0',
  },
  {
    dbId: 'financial',
    release: BOTH,
    sizeBytes: 71_294_976,
    sha256: 'd15d89cdb068a202b6f2b99342af44dffc1d52545b39ceaf62efdc0ba570101e',
  },
  {
    dbId: 'formula_1',
    release: LFS,
    sizeBytes: 22_360_064,
    sha256: '79770caf966707e35516fa566e24b40ae515c74ec1ec4631235245645b87b24d',
  },
  {
    dbId: 'formula_1',
    release: V0627,
    sizeBytes: null,
    sha256: '17185981cd747f6cdc374cb02a6096db3130e6ec2ddc582fe1686a28fb4c4c8a',
  },
  {
    dbId: 'student_club',
    release: BOTH,
    sizeBytes: 2_641_920,
    sha256: 'eb89bcfe97eefa386a27904ec5aa15159811a7eac894ec659a36e48fa9f76b77',
  },
  {
    dbId: 'superhero',
    release: BOTH,
    sizeBytes: 237_568,
    sha256: '75e94a2c3236ee3bb2c01fb97a1c4b4c1c269bcefd4eab1d04be323d2d0825b1',
  },
  {
    dbId: 'thrombosis_prediction',
    release: LFS,
    sizeBytes: 7_327_744,
    sha256: '87583183c3dc472fba04de702965560a9d7c0a548836613f242317e0eeb83f00',
  },
  {
    dbId: 'thrombosis_prediction',
    release: V0627,
    sizeBytes: null,
    sha256: 'e7e16d74b4731b4b8d33fdbe8c29cd5622620788ce8d1f335631f65fc7cf1db9',
  },
  {
    dbId: 'toxicology',
    release: LFS,
    sizeBytes: 2_678_784,
    sha256: '35ef27ae6bdfda530e125ed369666ac0abb8bc8c0bcc0ad09407f547ecb61a93',
  },
  {
    dbId: 'toxicology',
    release: V0627,
    sizeBytes: null,
    sha256: 'f5fa7f21af1ad878ff8fef1b0582b8cb2d7ed63dbac65ff16d2ba05667650c5b',
  },
];

const BY_SHA = new Map(KNOWN_DATABASES.map((k) => [k.sha256, k]));

/**
 * `"<db> from <release>"` when the fingerprint is published. A file known under another
 * db name still matches (the bytes are the release's), and the label says which name.
 */
export function knownDatabase(sha256: string): string | null {
  const k = BY_SHA.get(sha256.toLowerCase());
  return k ? `${k.dbId} from ${k.release}` : null;
}
