// The fields of one block, by its kind (the api's TemplateBlock* schemas). A columns block holds a list of blocks per
// column, edited with the same list as the document's.
import type { Schemas } from '../api/client';
import { ALIGN_OPTIONS, ColorInput, NumberInput, SelectInput, TextInput } from './fields';
import type { AnyBlock, ColumnsBlock } from './model';
import { BlockList, type ListProps } from './BlockList';

type Social = Schemas['TemplateBlockSocial'];
type Heading = Schemas['TemplateBlockHeading'];
type Paragraph = Schemas['TemplateBlockText'];
type Image = Schemas['TemplateBlockImage'];
type Button = Schemas['TemplateBlockButton'];
type Network = Social['links'][number]['network'];
const NETWORKS: Network[] = ['facebook', 'x', 'instagram', 'linkedin', 'youtube', 'github', 'pinterest', 'web'];
const VARS = 'May hold variables: {{{NAME}}}, {{{NAME|fallback}}}.';

export function BlockForm({ block, set, list }: { block: AnyBlock; set: (b: AnyBlock) => void; list: ListProps }) {
  switch (block.type) {
    case 'heading':
    case 'text':
      return <TextForm block={block} set={set} />;
    case 'image':
    case 'button':
      return <LinkForm block={block} set={set} />;
    case 'divider':
      return (
        <>
          <ColorInput label="Color" value={block.color} onChange={(color) => set({ ...block, color })} />
          <NumberInput
            label="Thickness (px)"
            min={1}
            max={8}
            value={block.thickness}
            onChange={(thickness) => set({ ...block, thickness })}
          />
        </>
      );
    case 'columns':
      return <ColumnsForm block={block} set={set} list={list} />;
    case 'social':
      return <SocialForm block={block} set={set} readOnly={list.readOnly} />;
    case 'footer':
      return (
        <>
          <TextInput
            label="Sender and postal address"
            multiline
            value={block.text}
            optional
            onChange={(text) => set({ ...block, text })}
          />
          <TextInput
            label="Unsubscribe link words"
            value={block.unsubscribe_text}
            optional
            placeholder="Unsubscribe"
            onChange={(unsubscribe_text) => set({ ...block, unsubscribe_text })}
          />
        </>
      );
  }
}

function Align({ block, set }: { block: AnyBlock; set: (b: AnyBlock) => void }) {
  return (
    <SelectInput
      label="Alignment"
      value={'align' in block ? block.align : undefined}
      options={ALIGN_OPTIONS}
      unset="Default"
      onChange={(align) => set({ ...block, align } as AnyBlock)}
    />
  );
}

function TextForm({ block, set }: { block: Heading | Paragraph; set: (b: AnyBlock) => void }) {
  return (
    <>
      <TextInput
        label={block.type === 'heading' ? 'Heading' : 'Text'}
        multiline={block.type === 'text'}
        value={block.text}
        hint={VARS}
        onChange={(text) => set({ ...block, text: text ?? '' })}
      />
      {block.type === 'heading' ? (
        <SelectInput
          label="Level"
          value={block.level}
          options={[
            { value: 1, label: '1 (largest)' },
            { value: 2, label: '2' },
            { value: 3, label: '3' },
          ]}
          unset="Default (1)"
          onChange={(level) => set({ ...block, level })}
        />
      ) : (
        <NumberInput
          label="Font size (px)"
          min={10}
          max={40}
          value={block.font_size}
          onChange={(font_size) => set({ ...block, font_size })}
        />
      )}
      <Align block={block} set={set} />
      <ColorInput label="Color" value={block.color} onChange={(color) => set({ ...block, color })} />
    </>
  );
}

function LinkForm({ block, set }: { block: Image | Button; set: (b: AnyBlock) => void }) {
  if (block.type === 'button')
    return (
      <>
        <TextInput label="Label" value={block.text} onChange={(text) => set({ ...block, text: text ?? '' })} />
        <TextInput label="Link" value={block.href} onChange={(href) => set({ ...block, href: href ?? '' })} />
        <Align block={block} set={set} />
        <ColorInput
          label="Button color"
          value={block.background_color}
          onChange={(background_color) => set({ ...block, background_color })}
        />
        <ColorInput label="Label color" value={block.color} onChange={(color) => set({ ...block, color })} />
      </>
    );
  return (
    <>
      <TextInput label="Image URL" value={block.src} onChange={(src) => set({ ...block, src: src ?? '' })} />
      <TextInput
        label="Alternative text"
        value={block.alt}
        optional
        hint="What the image shows, for readers who cannot see it."
        onChange={(alt) => set({ ...block, alt })}
      />
      <TextInput label="Link" value={block.href} optional onChange={(href) => set({ ...block, href })} />
      <NumberInput
        label="Width (px)"
        min={16}
        max={800}
        value={block.width}
        onChange={(width) => set({ ...block, width })}
      />
      <Align block={block} set={set} />
    </>
  );
}

function ColumnsForm({ block, set, list }: { block: ColumnsBlock; set: (b: AnyBlock) => void; list: ListProps }) {
  const count = block.columns.length;
  return (
    <>
      <SelectInput
        label="Columns"
        value={count}
        options={[2, 3, 4].map((n) => ({ value: n, label: String(n) }))}
        onChange={(n = 2) => {
          const columns = Array.from({ length: n }, (_, i) => block.columns[i] ?? { blocks: [] });
          set({ ...block, columns });
        }}
      />
      {block.columns.map((_, i) => (
        <section key={i} className="column" aria-label={`Column ${i + 1} of ${block.id}`}>
          <h4>Column {i + 1}</h4>
          <BlockList {...list} list={{ parent: block.id, column: i }} />
        </section>
      ))}
    </>
  );
}

function SocialForm({ block, set, readOnly }: { block: Social; set: (b: AnyBlock) => void; readOnly: boolean }) {
  const setLink = (i: number, l: Social['links'][number]) =>
    set({ ...block, links: block.links.map((x, j) => (j === i ? l : x)) });
  return (
    <>
      {block.links.map((l, i) => (
        <fieldset key={i} className="social-link">
          <legend>Profile {i + 1}</legend>
          <SelectInput
            label="Network"
            value={l.network}
            options={NETWORKS.map((n) => ({ value: n, label: n }))}
            onChange={(network = 'web') => setLink(i, { ...l, network })}
          />
          <TextInput label="Profile URL" value={l.href} onChange={(href) => setLink(i, { ...l, href: href ?? '' })} />
          <TextInput
            label="Icon URL"
            value={l.icon_src}
            optional
            hint="Your own icon; without one, the platform's own for the network."
            onChange={(icon_src) => setLink(i, { ...l, icon_src })}
          />
          {!readOnly && block.links.length > 1 ? (
            <button
              type="button"
              className="small danger"
              onClick={() => set({ ...block, links: block.links.filter((_, j) => j !== i) })}
            >
              Remove profile {i + 1}
            </button>
          ) : null}
        </fieldset>
      ))}
      {!readOnly && block.links.length < 12 ? (
        <button
          type="button"
          className="small"
          onClick={() => set({ ...block, links: [...block.links, { network: 'web', href: 'https://example.com' }] })}
        >
          Add a profile
        </button>
      ) : null}
    </>
  );
}
