import { Hammer } from 'lucide-react';
import { EmptyState } from '../ui/empty-state.tsx';
import { PageHeader } from '../ui/page-header.tsx';

/** Stand-in for a page another engineer is building; says which page it is. */
export function PagePlaceholder({ page, description }: { page: string; description: string }) {
  return (
    <div data-testid={`placeholder-${page.toLowerCase()}`}>
      <PageHeader title={page} description={description} />
      <EmptyState icon={Hammer} title={`The ${page} page is being built`}>
        This is the {page} page of the eng console. Its route, navigation entry and command-palette entry are in place.
      </EmptyState>
    </div>
  );
}
