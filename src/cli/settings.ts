import { TURN_SETTINGS, loadSettings } from '../config/settings.js';
import type { FlagOverrides, Settings, TurnSetting } from '../config/settings.js';

/**
 * The CLI's one way to settings: its flags over the process environment and config.json. `uses`: the
 * turn settings the command reads (a bad value of another does not stop it).
 */
export function settingsFor(flags: FlagOverrides, uses: readonly TurnSetting[] = TURN_SETTINGS): Settings {
  return loadSettings(flags, process.env, uses);
}
