import { type IconButtonProps, TranslatableString } from '@rjsf/utils';

/**
 * rjsf's default array and additional-property buttons show a Bootstrap 3 glyph (an icon font the
 * dashboard does not load) with the words only in a tooltip: these show the words themselves.
 */
function TextButton({
  label,
  danger,
  ...props
}: IconButtonProps & { label: TranslatableString; danger?: boolean }) {
  const {
    registry,
    uiSchema: _uiSchema,
    iconType: _iconType,
    icon: _icon,
    className,
    title,
    ...rest
  } = props;
  return (
    <button type="button" {...rest} className={`${className ?? ''}${danger ? ' danger' : ''}`}>
      {title ?? registry.translateString(label)}
    </button>
  );
}

const AddButton = (props: IconButtonProps) => (
  <TextButton {...props} label={TranslatableString.AddItemButton} />
);
const CopyButton = (props: IconButtonProps) => (
  <TextButton {...props} label={TranslatableString.CopyButton} />
);
const MoveDownButton = (props: IconButtonProps) => (
  <TextButton {...props} label={TranslatableString.MoveDownButton} />
);
const MoveUpButton = (props: IconButtonProps) => (
  <TextButton {...props} label={TranslatableString.MoveUpButton} />
);
const RemoveButton = (props: IconButtonProps) => (
  <TextButton {...props} label={TranslatableString.RemoveButton} danger />
);
const ClearButton = (props: IconButtonProps) => (
  <TextButton {...props} label={TranslatableString.ClearLabel} />
);

export const TEXT_BUTTONS = {
  AddButton,
  CopyButton,
  MoveDownButton,
  MoveUpButton,
  RemoveButton,
  ClearButton,
};
