import type { ReactNode } from 'react';

/** The signed-out pages' frame: the product's name and one card. */
export function AuthFrame({ title, children }: { title: string; children: ReactNode }) {
  return (
    <main className="auth">
      <p className="brand">Postwerk</p>
      <section className="card">
        <h1>{title}</h1>
        {children}
      </section>
    </main>
  );
}
