import { loadSettings } from '../config/settings.js';
import type { FlagOverrides, Settings } from '../config/settings.js';

/** The CLI's one way to settings: its flags over the process environment and config.json. */
export function settingsFor(flags: FlagOverrides): Settings {
  return loadSettings(flags, process.env);
}
