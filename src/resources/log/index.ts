import ReceiptLongIcon from '@mui/icons-material/ReceiptLong';
import { LogList } from './LogList';

export default {
  list: LogList,
  icon: ReceiptLongIcon,
};
