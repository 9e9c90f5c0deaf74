import type { Config } from '../../config.js';
import type { Connector, ConnectorContext } from './connector.js';
import { recorded } from './exchanges.js';
import { pixApiConnector } from './pix-api/pix-api.js';
import { pspSimConnector } from './psp-sim/psp-sim.js';
import { sepaSftpConnector } from './sepa-sftp/sepa-sftp.js';
import { sandboxConnector } from './sandbox.js';
import type { ChannelSettings } from '../../channel-settings.js';

/** The built-in channel's name; orders it serves carry `channel` NULL. */
export const SANDBOX_CHANNEL = 'sandbox';

/**
 * The channels of this deployment, built once at start-up from PAYGATE_CHANNELS. Routing picks
 * the first channel serving the currency and method (payouts: the currency): configured
 * channels first, the built-in sandbox channel last and only in the sandbox environment. In
 * production an order nothing serves is refused.
 */
export class ChannelRegistry {
  private readonly byName = new Map<string, Connector>();
  private readonly ordered: readonly Connector[];

  constructor(configured: readonly Connector[], builtIn: Connector | undefined) {
    this.ordered = builtIn ? [...configured, builtIn] : [...configured];
    for (const connector of configured) this.byName.set(connector.name, connector);
  }

  /** A configured channel by name (the built-in sandbox channel is not looked up by name). */
  get(name: string): Connector | undefined {
    return this.byName.get(name);
  }

  /** The configured channels, in file order. */
  list(): readonly Connector[] {
    return [...this.byName.values()];
  }

  /** The channel serving payments in `currency` by `method`, if any. */
  routePayment(currency: string, method: string): Connector | undefined {
    return this.ordered.find((c) => c.methods.some((m) => m.currency === currency && m.code === method));
  }

  /** The channel serving payouts in `currency`, if any. */
  routePayout(currency: string): Connector | undefined {
    return this.ordered.find((c) => c.payouts.includes(currency));
  }
}

function connectorFor(settings: ChannelSettings, context: ConnectorContext): Connector {
  switch (settings.kind) {
    case 'psp-sim':
      return pspSimConnector(settings, context);
    case 'pix-api':
      return pixApiConnector(settings, context);
    case 'sepa-sftp':
      return sepaSftpConnector(settings, context);
  }
}

/** Builds the registry from the validated configuration. */
export function channelRegistry(
  config: Pick<Config, 'channels' | 'environment' | 'publicUrl'>,
  context: Omit<ConnectorContext, 'publicUrl'>,
): ChannelRegistry {
  const full = { ...context, publicUrl: config.publicUrl };
  // Every exchange with a configured channel is recorded, the same way for every kind (exchanges.ts).
  const db = context.db;
  const configured = config.channels.map((settings) => {
    const connector = connectorFor(settings, full);
    return db === undefined ? connector : recorded(connector, db, context.now);
  });
  return new ChannelRegistry(
    configured,
    config.environment === 'sandbox' ? sandboxConnector(config.publicUrl) : undefined,
  );
}

/** The channel name stored on an order: NULL for the built-in sandbox channel. */
export const storedChannel = (connector: Connector): string | null =>
  connector.kind === 'sandbox' ? null : connector.name;
