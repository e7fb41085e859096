"""Django: ``SnoField``, a model field of the ``sno`` type (values are ``sno_postgres.Sno``),
and the SQL functions as expressions.

    from sno_postgres.django import SnoField, SnoGenerate, SnoMin

    class Item(models.Model):
        id = SnoField(primary_key=True, db_default=SnoGenerate(1))   # Django 5.0+ for db_default

    item = Item.objects.create()                    # item.id: the ID the server made
    Item.objects.filter(id__gte=SnoMin(Value(since)))
    Item.objects.get(pk="brpk4q72xwf2m63l")        # a str is checked, then compared as sno

Lookups take a ``Sno``, its 16 characters or its 10 bytes; anything else raises
``ValidationError`` before a query. A foreign key to such a model is a ``sno`` column too.
Forms, the admin and serializers see the 16 characters.
"""

from django.core import exceptions
from django.db import connections, models
from django.utils.translation import gettext_lazy as _

from . import Sno, SnoError

__all__ = ["SnoField", "SnoGenerate", "SnoMin", "SnoMax", "generate_ids"]


class SnoField(models.Field):
    description = _("sno ID")
    empty_strings_allowed = False
    default_error_messages = {"invalid": _("“%(value)s” is not a valid sno ID: %(reason)s")}

    def db_type(self, connection):
        return "sno"

    def get_internal_type(self):
        return "SnoField"

    def to_python(self, value):
        if value is None or isinstance(value, Sno):
            return value
        try:
            return Sno(value)
        except SnoError as error:
            raise exceptions.ValidationError(
                self.error_messages["invalid"],
                code="invalid",
                params={"value": value, "reason": error},
            ) from error

    def from_db_value(self, value, expression, connection):
        return None if value is None else Sno(value)

    def get_prep_value(self, value):
        value = super().get_prep_value(value)
        value = self.to_python(value)
        return None if value is None else str(value)

    def value_to_string(self, obj):
        value = self.value_from_object(obj)
        return "" if value is None else str(value)

    def formfield(self, **kwargs):
        from django import forms

        return super().formfield(
            **{"form_class": forms.CharField, "max_length": 16, "min_length": 16, **kwargs}
        )


def generate_ids(meta: int, count: int, using: str = "default") -> list:
    """``count`` new IDs from the server's generator, in order, in one query.

    For ``bulk_create``: Django (5.2) counts a ``db_default`` primary key as set, so it inserts
    the server's IDs but does not put them on the objects. Give the objects their IDs first:

        for item, id in zip(items, generate_ids(1, len(items))):
            item.id = id
        Item.objects.bulk_create(items)
    """
    with connections[using].cursor() as cursor:
        cursor.execute(
            "SELECT sno_generate(%s)::text FROM generate_series(1, %s) ORDER BY 1", [meta, count]
        )
        return [Sno(text) for (text,) in cursor.fetchall()]


def _expression(value):
    """A Python value as a parameter; an expression (a field, a Func) as it is."""
    return value if hasattr(value, "resolve_expression") else models.Value(value)


class SnoGenerate(models.Func):
    """``sno_generate(meta)``: a new ID from the server's generator."""

    function = "sno_generate"
    arity = 1

    def __init__(self, meta=0, **extra):
        super().__init__(_expression(meta), output_field=SnoField(), **extra)


class SnoMin(models.Func):
    """``sno_min(at)``: the smallest ID of the 4 ms unit containing ``at``."""

    function = "sno_min"
    arity = 1

    def __init__(self, at, **extra):
        super().__init__(_expression(at), output_field=SnoField(), **extra)


class SnoMax(models.Func):
    """``sno_max(at)``: the largest ID of the 4 ms unit containing ``at``."""

    function = "sno_max"
    arity = 1

    def __init__(self, at, **extra):
        super().__init__(_expression(at), output_field=SnoField(), **extra)
