// The first 7 of the 13 real mini-dev prediction files (tests/helpers/minidev-ts.ts says what is checked).
import { MINIDEV_FILES, describeMinidevTs } from '../../helpers/minidev-ts.ts';

describeMinidevTs(MINIDEV_FILES.slice(0, 7));
