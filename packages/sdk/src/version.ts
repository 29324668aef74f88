/** Reported to the engine in `engine::workers::register` (spec §4.2). Kept equal to package.json by a test. */
export const SDK_VERSION = '0.1.0';
