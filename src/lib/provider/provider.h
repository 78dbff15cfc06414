/*
 * Reading provider topology files: the role of each <pci> element (GPU, NIC,
 * switch), with or without a SKU's layout, and recognising the SKU of a file.
 * Shared by complete (the fill) and lint (partial findings and defects).
 */
#ifndef TP_PROVIDER_H
#define TP_PROVIDER_H

#include "provider/sku.h"
#include "xml/xml.h"

typedef enum tp_pv_role { TP_PV_OTHER, TP_PV_GPU, TP_PV_NIC, TP_PV_SWITCH } tp_pv_role;

typedef struct tp_pv_pci {
    tp_xml_elem *e;    /* borrowed from the document */
    const char *busid; /* "" when the element has none */
    tp_pv_role role;
} tp_pv_pci;

typedef struct tp_pv_file {
    tp_pv_pci *pci; /* owned array, document order */
    size_t n_pci, cap_pci;
    tp_xml_elem **cpus; /* owned array of borrowed elements */
    size_t n_cpus, cap_cpus;
} tp_pv_file;

/* Collect the <cpu> and <pci> elements of doc and their roles (sku may be NULL). */
tp_status tp_pv__scan(tp_pv_file *f, const tp_xml *doc, const tp_sku *sku, tp_error *err);
void tp_pv__free(tp_pv_file *f);
/* Does this <pci> (or one of its <nic>) hold a <net>? */
bool tp_pv__has_net(const tp_xml_elem *pci);

/*
 * The SKU of a file: the catalogue entry whose layout (GPU, NIC and switch bus
 * ids) holds the most of the file's bus ids (at least half, or a quarter when
 * the file has numbers of GPUs and NICs no other SKU has), among those whose GPU PCI device and
 * CPU family (when both sides give them) agree. name gets it ("" when no
 * SKU fits or two fit equally well); candidates gets "name (k/n bus ids), ...".
 */
tp_status tp_pv__recognise(const tp_xml *doc, char *name, size_t size, char *candidates,
                           size_t csize, tp_error *err);

#endif
