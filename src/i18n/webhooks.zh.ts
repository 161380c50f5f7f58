// Chinese strings of the webhook screens; the same keys as webhooks.en.ts.
import type { webhooksEnglish } from './webhooks.en';

export const webhooksChinese: typeof webhooksEnglish = {
  webhooks: {
    menu: 'Webhook',
    title: 'Webhook',
    add: '添加 Webhook',
    create_title: '新建 Webhook',
    edit_title: '编辑 Webhook',
    intro: '向你的地址发送签名的 JSON 事件：渠道被禁用或重新启用、余额低于提醒阈值、令牌额度用尽。',
    fields: {
      id: 'ID',
      name: '名称',
      url: '地址',
      events: '事件',
      enabled: '启用',
      created_time: '创建时间',
      secret: '签名密钥',
      secret_create_help: '留空则自动生成。保存后只显示一次。',
      secret_edit_help: '留空则保留当前密钥；输入新密钥将替换它。',
    },
    events: {
      'channel.disabled': '渠道被禁用',
      'channel.enabled': '渠道重新启用',
      'user.balance_low': '余额低于提醒阈值',
      'token.exhausted': '令牌额度用尽',
      'webhook.test': '测试事件',
    },
    validation: {
      url: '请输入 http:// 或 https:// 开头的地址',
    },
    secret_dialog: {
      title: '请立即复制签名密钥',
      body: '密钥只显示这一次。接收方用它校验每次投递的 X-Switchboard-Signature 请求头。',
      done: '完成',
    },
    actions: {
      test: '发送测试事件',
      test_sent: '测试事件已加入队列',
      deliveries: '投递记录',
      redeliver: '重新投递',
      redelivered: '已重新加入投递队列',
    },
    deliveries: {
      menu: '投递记录',
      title: 'Webhook 投递记录',
      fields: {
        id: 'ID',
        webhook: 'Webhook',
        event_type: '事件',
        status: '状态',
        attempts: '尝试次数',
        last_status_code: '最近响应',
        last_error: '最近错误',
        next_attempt_at: '下次尝试',
        created_time: '创建时间',
      },
      status: {
        pending: '等待中',
        delivered: '已送达',
        failed: '失败',
      },
      no_answer: '无响应',
    },
  },
};
