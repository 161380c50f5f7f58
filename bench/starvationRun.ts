// npm run bench:starvation: the starvation scenario alone (bench/starvation.ts),
// on a gateway and an emulator of its own; `npm run bench` runs it after its table.
import { prepareGateway } from './consoleApi';
import { placeProcesses, startFlags, startScript, type Started } from './processes';
import { starvationScenario } from './starvation';

const placement = placeProcesses();
const started: Started[] = [];
try {
  const emulator = await startScript('emulatorProcess', {});
  started.push(emulator);
  const gateway = await startScript('gatewayProcess', {}, startFlags());
  started.push(gateway);
  placement.pinMeasured(gateway.child.pid!);
  const { rootCookie, key } = await prepareGateway(gateway.url, emulator.url, 'gpt-3.5-turbo');
  const lines = await starvationScenario({ gateway: gateway.url, rootCookie, floodKey: key });
  console.log(
    [`# Switchboard starvation scenario (${new Date().toISOString()})`, '', `CPU placement: ${placement.description}.`, '', ...lines].join(
      '\n',
    ),
  );
} finally {
  await Promise.all(started.map((part) => part.stop()));
}
