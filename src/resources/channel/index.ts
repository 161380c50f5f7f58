// The list loads on demand: a user's first screen and the login page never download it.
import HubIcon from '@mui/icons-material/Hub';
import { lazy } from 'react';

export default {
  list: lazy(() => import('./ChannelList').then((module) => ({ default: module.ChannelList }))),
  icon: HubIcon,
  recordRepresentation: 'name',
};
