// 通行密钥的中文文案；键与 passkey.en.ts 一致（有测试保证）。
import type { passkeyEnglish } from './passkey.en';

export const passkeyChinese: typeof passkeyEnglish = {
  passkey: {
    title: '通行密钥',
    help: '用指纹、面容或设备 PIN 登录，无需密码。输入密码后，通行密钥也可以作为第二验证因素。',
    list_label: '你的通行密钥',
    none: '还没有通行密钥。',
    name: '通行密钥名称',
    add: '添加通行密钥',
    added_notice: '通行密钥已添加',
    removed_notice: '通行密钥已删除',
    created: '添加于 %{time}',
    last_used: '最近使用 %{time}',
    never_used: '从未使用',
    synced: '已同步',
    remove: '删除',
    remove_label: '删除通行密钥 %{name}',
    remove_title: '删除通行密钥“%{name}”？',
    remove_content: '删除后它将不能再用于登录。请同时在设备或密码管理器中删除它。',
    unsupported: '此浏览器不支持通行密钥。',
    cancelled: '通行密钥请求已取消或超时。',
    already_registered: '此验证器已保存你账户的通行密钥。',
    browser_failed: '浏览器未能完成通行密钥请求。',
    sign_in: '使用通行密钥登录',
    use_passkey: '使用通行密钥',
    second_step_help: '使用你的通行密钥完成登录。',
    setup_help: '你的账户需要第二验证因素：设置验证器应用或添加通行密钥后继续。',
  },
};
