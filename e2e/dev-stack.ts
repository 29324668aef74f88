/**
 * Development helper: start the e2e stack (engine + orders worker + eng-console) and keep it
 * running until Ctrl-C. `node --import tsx e2e/dev-stack.ts [eng-console flags]`
 */
import { startStack } from './fixtures/stack.ts';

const stack = await startStack({ consoleArgs: process.argv.slice(2) });
process.stdout.write(
  `console ${stack.console.url}\nengine bus ${stack.engine.busUrl}\nhttp ${stack.engine.ports.HTTP}\nstreams ${stack.engine.ports.STREAMS}\n`,
);
const stop = async () => {
  await stack.stop();
  process.exit(0);
};
process.on('SIGINT', () => void stop());
process.on('SIGTERM', () => void stop());
