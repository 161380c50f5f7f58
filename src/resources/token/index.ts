import KeyIcon from '@mui/icons-material/Key';
import { TokenList } from './TokenList';

export default {
  list: TokenList,
  icon: KeyIcon,
  recordRepresentation: 'name',
};
