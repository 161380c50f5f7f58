import HubIcon from '@mui/icons-material/Hub';
import { ChannelList } from './ChannelList';

export default {
  list: ChannelList,
  icon: HubIcon,
  recordRepresentation: 'name',
};
