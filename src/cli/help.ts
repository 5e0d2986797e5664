// How --help is laid out at any width, for every command (commands copy it from the program).
import { Help } from 'commander';
import type { HelpConfiguration, OutputConfiguration } from 'commander';
import { widthOfStream } from '../output/width.js';

/** Fewer columns than this beside its term, and a description goes on the lines under it instead. */
const MIN_BESIDE = 24;
const UNDER_INDENT = 6;

export const HELP_LAYOUT: HelpConfiguration = {
  // Commander leaves a description unwrapped when its column is narrower than 40 (its default),
  // and the terminal then breaks its words wherever a line ends.
  minWidthToWrap: 12,
  formatItem(term, termWidth, description, helper) {
    const width = helper.helpWidth ?? 80;
    if (description === '' || width - termWidth - 4 >= MIN_BESIDE) return Help.prototype.formatItem.call(helper, term, termWidth, description, helper);
    const indent = ' '.repeat(UNDER_INDENT);
    const text = helper.preformatted(description) ? description : helper.boxWrap(description, width - UNDER_INDENT);
    return `  ${term}\n${indent}${text.replace(/\n/g, `\n${indent}`)}`;
  },
};

// Commander's own width off a terminal.
const HELP_WIDTH_WITHOUT_TERMINAL = 80;

/** Help is as wide as a table would be: COLUMNS when set, else the terminal's (Commander reads the terminal's only). */
export const HELP_WIDTHS: Pick<OutputConfiguration, 'getOutHelpWidth' | 'getErrHelpWidth'> = {
  getOutHelpWidth: () => widthOfStream(process.stdout, process.env) ?? HELP_WIDTH_WITHOUT_TERMINAL,
  getErrHelpWidth: () => widthOfStream(process.stderr, process.env) ?? HELP_WIDTH_WITHOUT_TERMINAL,
};
