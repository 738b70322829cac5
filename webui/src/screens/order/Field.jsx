/**
 * A labelled input: <div class={className}><label/><input/>{children}</div>.
 * `onValue` receives the input's value on every change (for a plain `onChange`,
 * pass that instead); `row` wraps the input and `children` in a <div> of that
 * class (an input with its button); other props go to the <input>.
 */
export default function Field({ id, label, className = "field", row, onValue, children, ...input }) {
  const onChange = onValue ? (e) => onValue(e.target.value) : input.onChange;
  const control = <input id={id} {...input} onChange={onChange} />;
  return (
    <div className={className}>
      <label htmlFor={id}>{label}</label>
      {row ? (
        <div className={row}>
          {control}
          {children}
        </div>
      ) : (
        <>
          {control}
          {children}
        </>
      )}
    </div>
  );
}
