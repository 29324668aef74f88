import { createLazyRoute } from '@tanstack/react-router';
import { MessagesSquare } from 'lucide-react';
import { ChatPage } from '../components/chat/chat-page.tsx';
import { GatedPage } from '../components/presence/gated-page.tsx';

export const Route = createLazyRoute('/chat')({
  component: () => (
    <GatedPage
      surface="chat"
      title="Chat"
      description="Conversations with the chat stack: models, function calls, approvals"
      icon={MessagesSquare}
      fill
    >
      <ChatPage />
    </GatedPage>
  ),
});
