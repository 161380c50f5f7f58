
import { anthropicAdaptor } from '../../../server/protocols/upstream/anthropic';
import { describeAdaptor } from './contract';

describeAdaptor('anthropic', anthropicAdaptor);
