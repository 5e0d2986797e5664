/** The options doctor reads; any of them may be given before `doctor` (to the program) instead. */
export const DOCTOR_OPTIONS = ['home', 'host', 'model', 'api'] as const;
