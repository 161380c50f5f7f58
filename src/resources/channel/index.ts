// Screens load on demand: a user's first screen and the login page never download them.
import HubIcon from '@mui/icons-material/Hub';
import { lazyNamed } from '../../lazyNamed';
import type { ResourceDefinition } from '../types';

export default {
  name: 'channel',
  list: lazyNamed(() => import('./ChannelList'), 'ChannelList'),
  create: lazyNamed(() => import('./ChannelCreate'), 'ChannelCreate'),
  edit: lazyNamed(() => import('./ChannelEdit'), 'ChannelEdit'),
  paths: { create: '/channel/add', edit: '/channel/edit/:id' },
  icon: HubIcon,
  recordRepresentation: 'name',
  menu: { label: 'app.menu.channel', role: 10 },
} satisfies ResourceDefinition;
