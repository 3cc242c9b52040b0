// lib/log.ts's level: LOG_LEVEL, which lib/settings.ts gives every function. A module of its own, as
// lib/config.ts imports the domain's types and the domain logs: no import runs in a circle.
import * as v from 'valibot';
import type { Env } from './environment.ts';
import { LOG_LEVEL } from './schemas.ts';

/** Never fails: a level it does not know is `info` (lib/config/schemas.ts). */
export const readLogConfig = (env: Env = process.env) => ({ level: v.parse(LOG_LEVEL(), env.LOG_LEVEL) });
